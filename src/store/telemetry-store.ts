import type { JsonObject, Page, PageRequest } from './rows.js'

/**
 * What bots report about themselves through the Runtime API (migrations/<dialect>/0007_runtime_state.sql):
 * trackAnalytics counters (per bot, name and UTC day), captureObservation records (the newest
 * `keep` per bot) and configureIntegration registrations (per integration).
 */
export interface AnalyticsRow { botId: string; name: string; day: string; count: number; updatedAt: number }

export interface ObservationRow {
  id: string
  botId: string
  name: string
  data: JsonObject
  /** messageId, eventId, conversationId, userId, errorId, traceId as given. */
  refs: Record<string, string>
  createdAt: number
}

export interface IntegrationRegistrationRow {
  integrationId: string
  identifier: string | null
  scheduleRegisterCall: string | null
  sandboxIdentifiers: JsonObject | null
  updatedAt: number
}

export interface IntegrationRegistrationPatch {
  /** null removes it; undefined keeps it. */
  identifier?: string | null | undefined
  scheduleRegisterCall?: string | undefined
  sandboxIdentifiers?: JsonObject | null | undefined
}

export interface TelemetryStore {
  /** Adds `count` to the bot's counter `name` of `day` (YYYY-MM-DD). */
  addAnalytics(botId: string, name: string, day: string, count: number, now: number): Promise<void>
  /** The bot's counters, newest day first. */
  listAnalytics(botId: string, page: PageRequest): Promise<Page<AnalyticsRow>>
  /** Stores the observation (same id again: replaced) and trims the bot's oldest beyond `keep`. */
  addObservation(row: ObservationRow, keep: number): Promise<void>
  /** Newest first. */
  listObservations(botId: string, page: PageRequest): Promise<Page<ObservationRow>>
  setRegistration(integrationId: string, patch: IntegrationRegistrationPatch, now: number): Promise<IntegrationRegistrationRow>
  getRegistration(integrationId: string): Promise<IntegrationRegistrationRow | undefined>
}
