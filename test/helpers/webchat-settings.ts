/** A full set of per-bot webchat settings (every appearance and launcher key), for tests that store and read them. */
export const WEBCHAT_SETTINGS = {
  botName: 'Ada',
  botAvatarUrl: 'https://example.com/ada.png',
  botDescription: 'Answers questions about orders',
  primaryColor: '#0b6e4f',
  fontFamily: 'Georgia, "Times New Roman", serif',
  radius: 6,
  themeMode: 'dark',
  composerPlaceholder: 'Ask Ada…',
  launcherLabel: 'Help',
  launcherIconUrl: 'https://example.com/icon.png',
  launcherPosition: 'left',
  launcherBadgeColor: '#005a9c',
} as const
