import { Type } from 'typebox'

/** An integration definition as the Admin API shows it (integrationDefinitionView); the definition's parts as given. */
export const IntegrationDefinitionSchema = Type.Object({
  id: Type.String(), createdAt: Type.String(), updatedAt: Type.String(), name: Type.String(), version: Type.String(),
  url: Type.String(), dev: Type.Boolean(), signingSecret: Type.String({ description: 'Empty for roles that may not change integrations' }),
  secrets: Type.Array(Type.String(), { description: 'Names only: secret values (createIntegration/updateIntegration `secrets: { NAME: value }`) are given to the integration alone (getIntegrationSecrets with its API key), never shown' }),
}, { additionalProperties: true })

/** createIntegration / updateIntegration body: name, version, url, dev checked here, the rest by IntegrationService.checkDefinition. */
export const DefinitionFields = {
  url: Type.Optional(Type.Union([Type.String({ maxLength: 2048, description: 'Where the integration is served (its @botpress/sdk server)' }), Type.Null()])),
  dev: Type.Optional(Type.Boolean()),
}

/** createIntegration's body (and validateIntegrationCreation's: the same checks, nothing written). */
export const CreateIntegrationBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  version: Type.String({ minLength: 1, maxLength: 100 }),
  ...DefinitionFields,
}, { additionalProperties: true })
