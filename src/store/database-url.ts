/** The URL without its password (and password-like query parameters), for logs and the startup banner. */
export function redactDatabaseUrl(url: string): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    for (const key of [...u.searchParams.keys()]) if (/pass|secret|key/i.test(key)) u.searchParams.set(key, '***')
    return u.toString()
  } catch {
    return 'postgres://(unparsable URL)'
  }
}
