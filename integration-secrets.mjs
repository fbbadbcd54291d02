// Puts an integration's secret values in its environment before it starts, as SECRET_<NAME> (where the code the
// Botpress CLI generates for `secrets` reads them: process.env.SECRET_<NAME>), so an unchanged @botpress/sdk
// integration served elsewhere gets the `secrets` set with createIntegration/updateIntegration:
//
//   BP_API_URL=https://parley.example.com BP_TOKEN=iak_… node --import parley/integration-secrets ./integration.mjs
//
// BP_TOKEN is the integration's API key (createIntegrationApiKey). A variable already set wins (local overrides).
// Plain JavaScript with no dependencies: it runs before anything else of the integration.
const base = (process.env.BP_API_URL ?? '').replace(/\/+$/, '')
const token = process.env.BP_TOKEN
if (!base || !token) throw new Error('parley/integration-secrets: set BP_API_URL (Parley) and BP_TOKEN (the integration\'s API key)')
const res = await fetch(`${base}/v1/integration/secrets`, { headers: { authorization: `Bearer ${token}` } })
if (!res.ok) throw new Error(`parley/integration-secrets: ${base}/v1/integration/secrets answered ${res.status}: ${(await res.text()).slice(0, 300)}`)
const { secrets } = await res.json()
for (const [name, value] of Object.entries(secrets)) {
  const key = `SECRET_${name}`
  if (process.env[key] === undefined) process.env[key] = value
}
