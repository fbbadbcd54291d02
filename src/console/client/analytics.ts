/// <reference lib="dom" />
import uPlot from 'uplot'
import { h } from '../../webchat/client/dom.js'
import { json, qs } from './api.js'

interface Record_ { startDateTimeUtc: string; newUsers: number; returningUsers: number; sessions: number; userMessages: number; botMessages: number }

const CHARTS: Array<{ id: string; title: string; series: Array<[keyof Record_, string, string]> }> = [
  { id: 'messages', title: 'Messages', series: [['userMessages', 'User messages', '#1558b0'], ['botMessages', 'Bot messages', '#17663e']] },
  { id: 'users', title: 'Users', series: [['newUsers', 'New users', '#5b2a86'], ['returningUsers', 'Returning users', '#8a4b00']] },
  { id: 'sessions', title: 'Sessions', series: [['sessions', 'Sessions', '#b3261e']] },
]

const day = (d: Date) => d.toISOString().slice(0, 10)

/** getBotAnalytics per day as charts (uPlot), each with its numbers in a table beside it. */
export function analyticsPage({ botId, main }: { botId: string; main: HTMLElement }): () => void {
  const today = new Date()
  const start = h('input', { attrs: { id: 'start', type: 'date', value: day(new Date(today.getTime() - 13 * 86_400_000)) } })
  const end = h('input', { attrs: { id: 'end', type: 'date', value: day(today) } })
  const out = h('div', { class: 'charts' })
  const plots: uPlot[] = []
  let alive = true

  async function load(): Promise<void> {
    const r = await json<{ records: Record_[] }>(`/v1/admin/bots/${encodeURIComponent(botId)}/analytics${qs({ startDate: start.value, endDate: end.value })}`)
    if (!alive) return
    for (const p of plots.splice(0)) p.destroy()
    out.replaceChildren()
    const xs = r.records.map((x) => Date.parse(x.startDateTimeUtc) / 1000)
    const pending: Array<() => void> = []
    for (const chart of CHARTS) {
      const holder = h('div', { attrs: { 'aria-hidden': 'true' } })
      const table = h('table', { attrs: { 'data-chart': chart.id } }, [
        h('caption', { class: 'sr-only', text: `${chart.title} per day` }),
        h('thead', {}, [h('tr', {}, [h('th', { attrs: { scope: 'col' }, text: 'Day (UTC)' }), ...chart.series.map(([, label]) => h('th', { attrs: { scope: 'col' }, text: label }))])]),
        h('tbody', {}, r.records.map((rec) => h('tr', {}, [
          h('th', { attrs: { scope: 'row' }, text: rec.startDateTimeUtc.slice(0, 10) }),
          ...chart.series.map(([key]) => h('td', { attrs: { 'data-key': key }, text: String(rec[key]) })),
        ]))),
      ])
      const section = h('section', { class: 'panel', attrs: { 'aria-labelledby': `chart-${chart.id}` } }, [
        h('h3', { attrs: { id: `chart-${chart.id}` }, text: chart.title }), holder,
        h('details', { attrs: { open: '' } }, [h('summary', { text: `${chart.title}: the numbers` }), table]),
      ])
      out.append(section)
      // Charts are sized once every section is in the grid (a lone first section would take the whole row).
      pending.push(() => plots.push(new uPlot({
        width: Math.max(260, section.clientWidth - 34), height: 220,
        scales: { x: { time: true } },
        series: [{}, ...chart.series.map(([, label, stroke]) => ({ label, stroke, width: 2, points: { show: true } }))],
        axes: [{}, { label: 'count' }],
      }, [xs, ...chart.series.map(([key]) => r.records.map((rec) => Number(rec[key])))], holder)))
    }
    for (const draw of pending) draw()
  }

  const form = h('form', { class: 'filters', on: { submit: (e) => { e.preventDefault(); void load() } } }, [
    h('label', { attrs: { for: 'start' } }, ['From', start]), h('label', { attrs: { for: 'end' } }, ['To', end]),
    h('button', { attrs: { type: 'submit' }, text: 'Show' }),
  ])
  main.append(h('h2', { text: 'Analytics' }), h('p', { class: 'meta', text: 'Per UTC day. A session is a user\'s messages in a conversation with no gap over 30 minutes; a returning user had a message on an earlier day.' }), form, out)
  void load()
  return () => { alive = false; for (const p of plots.splice(0)) p.destroy() }
}
