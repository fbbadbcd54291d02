/**
 * The webchat settings' rules (src/webchat/shared/webchat-config.ts), shared by the server (400 naming the field) and
 * the browser (bad overrides dropped): values, overrides from strings, server-only keys, theme variables, contrast.
 */
import { describe, expect, it } from 'vitest'
import {
  dataAttributeOf, publicWebchatConfig, readableOn, sanitizeWebchatConfig, themeVariables, uploadTypeAllowed, webchatConfigProblem, webchatOverrides,
} from '../../src/webchat/shared/webchat-config.js'

describe('webchat settings rules', () => {
  it('accepts good values and names the problem of bad ones', () => {
    expect(webchatConfigProblem('primaryColor', '#0a7')).toBeUndefined()
    expect(webchatConfigProblem('primaryColor', '#0b6e4f')).toBeUndefined()
    expect(webchatConfigProblem('primaryColor', 'rgb(0,0,0)')).toMatch(/hex colour/)
    expect(webchatConfigProblem('radius', 0)).toBeUndefined()
    expect(webchatConfigProblem('radius', 4.5)).toMatch(/integer/)
    expect(webchatConfigProblem('fontFamily', '"Noto Sans", Arial, sans-serif')).toBeUndefined()
    expect(webchatConfigProblem('fontFamily', 'Arial; color: red')).toMatch(/font-family/)
    expect(webchatConfigProblem('botAvatarUrl', 'data:image/png;base64,AAAA')).toMatch(/http/)
    expect(webchatConfigProblem('botName', 'a\nb')).toMatch(/control characters/)
    expect(webchatConfigProblem('uploadTypes', 'image/*, application/pdf')).toBeUndefined()
    expect(webchatConfigProblem('uploadTypes', 'image/*;x')).toMatch(/content types/)
    expect(webchatConfigProblem('nope', 1)).toMatch(/is not a webchat setting/)
  })

  it('reads overrides from strings, drops bad ones, and never takes the server-only upload settings', () => {
    const params = new URLSearchParams('botName=Ada&radius=8&primaryColor=red&themeMode=dark&uploadTypes=*/*&uploadMaxBytes=999999999')
    expect(webchatOverrides((k) => params.get(k))).toEqual({ botName: 'Ada', radius: 8, themeMode: 'dark' })
    expect(sanitizeWebchatConfig({ radius: '99', launcherPosition: 'top', botName: 'ok', extra: 1 })).toEqual({ botName: 'ok' })
    expect(dataAttributeOf('launcherIconUrl')).toBe('data-launcher-icon-url')
    expect(dataAttributeOf('launcherBadgeColor')).toBe('data-launcher-badge-color')
  })

  it('the launcher badge colour is a hex colour; the public settings leave the upload policy out', () => {
    expect(webchatConfigProblem('launcherBadgeColor', '#c5221f')).toBeUndefined()
    expect(webchatConfigProblem('launcherBadgeColor', 'red')).toMatch(/hex colour/)
    const all = { botName: 'Ada', launcherBadgeColor: '#005a9c', uploadTypes: 'image/*', uploadMaxBytes: 10 }
    expect(publicWebchatConfig(all)).toEqual({ botName: 'Ada', launcherBadgeColor: '#005a9c' })
    expect(all.uploadTypes).toBe('image/*') // not changed in place
    // The badge's default (#c5221f) takes white text (contrast 5.8:1, above WCAG AA's 4.5:1).
    expect(readableOn('#c5221f')).toBe('#ffffff')
  })

  it('theme variables and readable text colours', () => {
    expect(themeVariables({ primaryColor: '#ffd166', radius: 2, fontFamily: 'Georgia' })).toEqual({
      '--pw-accent': '#ffd166', '--pw-mine': '#ffd166', '--pw-accent-text': '#000000', '--pw-mine-text': '#000000', '--pw-font': 'Georgia', '--pw-radius': '2px',
    })
    expect(readableOn('#0b6e4f')).toBe('#ffffff')
    expect(readableOn('#fff')).toBe('#000000')
  })

  it('matches upload types, wildcards included', () => {
    expect(uploadTypeAllowed('image/*,application/pdf', 'image/png')).toBe(true)
    expect(uploadTypeAllowed('image/*,application/pdf', 'application/pdf; charset=binary')).toBe(true)
    expect(uploadTypeAllowed('image/*,application/pdf', 'application/x-sh')).toBe(false)
    expect(uploadTypeAllowed('image/png', 'image/pngx')).toBe(false)
    expect(uploadTypeAllowed(undefined, 'image/png')).toBe(false)
  })
})
