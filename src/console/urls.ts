/** The console lives under /console; a sign-in link carries its secret in the fragment (never sent to a server or a log). */
export const CONSOLE_PREFIX = '/console'

export function consoleUrl(publicUrl: string): string {
  return `${publicUrl.replace(/\/+$/, '')}${CONSOLE_PREFIX}/`
}

export function consoleSignInUrl(publicUrl: string, secret: string): string {
  return `${consoleUrl(publicUrl)}#link=${encodeURIComponent(secret)}`
}
