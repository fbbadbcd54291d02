/// <reference lib="dom" />
import uPlot from 'uplot'
import { h } from '../../webchat/client/dom.js'
import { json, qs } from './api.js'

/** A day of getBotAnalytics and getBotQualityAnalytics side by side (the same days, in order). */
interface Record_ {
  startDateTimeUtc: string; newUsers: number; returningUsers: number; sessions: number; userMessages: number; botMessages: number
  handoffsRequested: number; handoffsClaimed: number; handoffWaitMeanSeconds: number; handoffWaitMaxSeconds: number
  failedTurns: number; timedOutTurns: number; knowledgeSearches: number; knowledgeNoAnswer: number; positiveFeedback: number; negativeFeedback: number
  /** getBotAnalytics' `llm`, flattened for the charts (docs/llm-usage.md#analytics). */
  llmCalls: number; llmErrors: number; llmInputTokens: number; llmOutputTokens: number; llmCost: number
}
/** The record of getBotAnalytics: its `llm` object is flattened into Record_'s llm* keys. */
type Activity = Record_ & { llm: { calls: number; errors: number; inputTokens: number; outputTokens: number; cost: { sum: number } } }
type Key = Exclude<keyof Record_, 'startDateTimeUtc'>

const CHARTS: Array<{ id: string; title: string; unit?: string; decimals?: number; series: Array<[Key, string, string]> }> = [
  { id: 'messages', title: 'Messages', series: [['userMessages', 'User messages', '#1558b0'], ['botMessages', 'Bot messages', '#17663e']] },
  { id: 'users', title: 'Users', series: [['newUsers', 'New users', '#5b2a86'], ['returningUsers', 'Returning users', '#8a4b00']] },
  { id: 'sessions', title: 'Sessions', series: [['sessions', 'Sessions', '#b3261e']] },
  { id: 'handoffs', title: 'Handoffs', series: [['handoffsRequested', 'Requested', '#1558b0'], ['handoffsClaimed', 'Claimed by an agent', '#17663e']] },
  { id: 'handoff-wait', title: 'Handoff wait (seconds, request to claim)', unit: 'seconds', series: [['handoffWaitMeanSeconds', 'Mean wait (s)', '#5b2a86'], ['handoffWaitMaxSeconds', 'Longest wait (s)', '#b3261e']] },
  { id: 'turns', title: 'Failed turns', series: [['failedTurns', 'Failed', '#b3261e'], ['timedOutTurns', 'Timed out', '#8a4b00']] },
  { id: 'knowledge', title: 'Knowledge questions', series: [['knowledgeSearches', 'Searches', '#1558b0'], ['knowledgeNoAnswer', 'No good passage', '#b3261e']] },
  { id: 'feedback', title: 'Feedback on bot messages', series: [['positiveFeedback', 'Helpful', '#17663e'], ['negativeFeedback', 'Not helpful', '#b3261e']] },
  { id: 'llm-calls', title: 'Language-model calls', series: [['llmCalls', 'Calls', '#1558b0'], ['llmErrors', 'Failed', '#b3261e']] },
  { id: 'llm-tokens', title: 'Language-model tokens', unit: 'tokens', series: [['llmInputTokens', 'Input tokens', '#5b2a86'], ['llmOutputTokens', 'Output tokens', '#17663e']] },
  { id: 'llm-cost', title: 'Language-model cost (US dollars)', unit: 'US dollars', decimals: 4, series: [['llmCost', 'Cost (USD)', '#8a4b00']] },
]

/** Numbers as the tables show them: counts as they are, seconds with one decimal, dollars with four. */
const shown = (n: number, decimals = 1) => Number.isInteger(n) ? String(n) : n.toFixed(decimals)

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
    const range = qs({ startDate: start.value, endDate: end.value })
    const base = `/v1/admin/bots/${encodeURIComponent(botId)}/analytics`
    let activity: { records: Activity[] }, quality: { records: Record_[] }
    try {
      ;[activity, quality] = await Promise.all([json<{ records: Activity[] }>(`${base}${range}`), json<{ records: Record_[] }>(`${base}/quality${range}`)])
    } catch (err) {
      if (alive) out.replaceChildren(h('p', { class: 'error-box', attrs: { role: 'alert' }, text: `The analytics could not be read: ${(err as Error).message}` }))
      return
    }
    if (!alive) return
    const r = {
      records: activity.records.map(({ llm, ...a }, i): Record_ => ({
        ...quality.records[i]!, ...a,
        llmCalls: llm.calls, llmErrors: llm.errors, llmInputTokens: llm.inputTokens, llmOutputTokens: llm.outputTokens, llmCost: llm.cost.sum,
      })),
    }
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
          ...chart.series.map(([key]) => h('td', { attrs: { 'data-key': key, 'data-value': String(rec[key]) }, text: shown(rec[key], chart.decimals) })),
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
        axes: [{}, { label: chart.unit ?? 'count' }],
      }, [xs, ...chart.series.map(([key]) => r.records.map((rec) => Number(rec[key])))], holder)))
    }
    for (const draw of pending) draw()
  }

  const form = h('form', { class: 'filters', on: { submit: (e) => { e.preventDefault(); void load() } } }, [
    h('label', { attrs: { for: 'start' } }, ['From', start]), h('label', { attrs: { for: 'end' } }, ['To', end]),
    h('button', { attrs: { type: 'submit' }, text: 'Show' }),
  ])
  main.append(h('h2', { text: 'Analytics' }), h('p', { class: 'meta', text: 'Per UTC day. A session is a user\'s messages in a conversation with no gap over 30 minutes; a returning user had a message on an earlier day. Handoffs and their waits count by the day of the request; a failed turn is a user\'s message, event or conversation start whose bot code threw or was stopped; a knowledge question found no good passage when none reached the relevance threshold; feedback counts by the day of the rated bot message; language-model calls, their tokens and cost (from the configured prices) count by the day of the call.' }), form, out)
  void load()
  return () => { alive = false; for (const p of plots.splice(0)) p.destroy() }
}
