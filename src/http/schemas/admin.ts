import { Type } from 'typebox'
import { IsoDate, StringMap } from './common.js'

/** Admin API shapes, following @botpress/client@1.45.0. */
export const RoleSchema = Type.Union(['viewer', 'billing', 'agent', 'developer', 'manager', 'administrator', 'owner'].map((r) => Type.Literal(r)))

export const AccountSchema = Type.Object({
  id: Type.String(), email: Type.String(), displayName: Type.Optional(Type.String()), emailVerified: Type.Boolean(), createdAt: IsoDate,
})

export const TokenSchema = Type.Object({ id: Type.String(), createdAt: IsoDate, note: Type.String() })
export const NewTokenSchema = Type.Object({
  id: Type.String(), createdAt: IsoDate, note: Type.String(), value: Type.String({ description: 'Shown once; only a digest is stored' }),
})

export const WorkspaceSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  ownerId: Type.String(),
  createdAt: IsoDate,
  updatedAt: IsoDate,
  botCount: Type.Integer(),
  billingVersion: Type.String(),
  plan: Type.String(),
  blocked: Type.Boolean(),
  spendingLimit: Type.Number(),
  activeTrialId: Type.Null(),
  handle: Type.Optional(Type.String({ description: 'The workspace handle (updateWorkspace({ handle })); the prefix of its integrations\' names, `handle/name`' })),
})

export const MemberSchema = Type.Object({
  id: Type.String(), userId: Type.String(), email: Type.String(), displayName: Type.Optional(Type.String()), createdAt: IsoDate, role: Type.String(),
  pat: Type.Optional(NewTokenSchema),
})

const Tags = StringMap(Type.String())

export const BotSummarySchema = Type.Object({
  id: Type.String(), createdAt: IsoDate, updatedAt: IsoDate, name: Type.String(), deployedAt: Type.Optional(IsoDate), tags: Tags, dev: Type.Boolean(),
  url: Type.Optional(Type.String({ description: 'Where the bot (an @botpress/sdk program) receives its events; absent: turns run in the sandbox' })),
})

const IntegrationSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    enabled: Type.Boolean(),
    webhookId: Type.String(),
    webhookUrl: Type.String({ description: 'Full Chat API base: pass it as apiUrl to @botpress/chat' }),
    configuration: StringMap(Type.Unknown()),
  },
  { additionalProperties: true },
)

/** A bot's webchat settings (rules: src/webchat/shared/webchat-config.ts; docs/webchat.md). */
export const WebchatConfigSchema = Type.Object({
  botName: Type.Optional(Type.String({ maxLength: 80 })),
  botAvatarUrl: Type.Optional(Type.String({ description: 'http(s) URL' })),
  botDescription: Type.Optional(Type.String({ maxLength: 500 })),
  primaryColor: Type.Optional(Type.String({ description: '#rgb or #rrggbb' })),
  fontFamily: Type.Optional(Type.String({ maxLength: 200 })),
  radius: Type.Optional(Type.Integer({ minimum: 0, maximum: 32, description: 'px' })),
  themeMode: Type.Optional(Type.Union([Type.Literal('light'), Type.Literal('dark'), Type.Literal('auto')])),
  composerPlaceholder: Type.Optional(Type.String({ maxLength: 120 })),
  launcherLabel: Type.Optional(Type.String({ maxLength: 40 })),
  launcherIconUrl: Type.Optional(Type.String({ description: 'http(s) URL' })),
  launcherPosition: Type.Optional(Type.Union([Type.Literal('right'), Type.Literal('left')])),
  launcherBadgeColor: Type.Optional(Type.String({ description: '#rgb or #rrggbb' })),
}, { additionalProperties: true })

export const BotSchema = Type.Object(
  {
    id: Type.String(),
    createdAt: IsoDate,
    updatedAt: IsoDate,
    name: Type.String(),
    description: Type.Optional(Type.String()),
    deployedAt: Type.Optional(IsoDate),
    tags: Tags,
    dev: Type.Boolean(),
    url: Type.Optional(Type.String({ description: 'Where the bot (an @botpress/sdk program) receives its events; absent: turns run in the sandbox' })),
    signingSecret: Type.String(),
    webchat: Type.Optional(WebchatConfigSchema),
    integrations: StringMap(IntegrationSchema),
  },
  { additionalProperties: true },
)

const IntegrationInput = Type.Union([
  Type.Null(),
  Type.Object(
    {
      enabled: Type.Optional(Type.Boolean()),
      configuration: Type.Optional(Type.Object({ encryptionKey: Type.Optional(Type.String({ minLength: 16, maxLength: 512 })) }, { additionalProperties: true })),
    },
    { additionalProperties: true },
  ),
])

/**
 * createBot / updateBot bodies. `states` declares the Runtime API's states. Botpress bots carry many more fields (events, actions…);
 * they are accepted for compatibility with existing tooling and ignored (see README).
 */
export const BotInputSchema = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
    tags: Type.Optional(StringMap(Type.Union([Type.String({ maxLength: 500 }), Type.Null()]), { minKeyLength: 1, maxKeyLength: 100 })),
    dev: Type.Optional(Type.Boolean()),
    code: Type.Optional(Type.String()),
    url: Type.Optional(Type.Union([Type.String({ description: 'http: or https: URL of a bot served elsewhere (an @botpress/sdk program); null removes it' }), Type.Null()])),
    maxExecutionTime: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 300, description: 'Seconds per hook, action or card run' }), Type.Null()])),
    integrations: Type.Optional(StringMap(IntegrationInput)),
    webchat: Type.Optional(Type.Union([Type.Null(), StringMap(Type.Unknown())], {
      description: 'Webchat settings merged into the stored ones (a key set to null is removed; null removes all); also accepted as integrations.chat.configuration.webchat. See docs/webchat.md',
    })),
    states: Type.Optional(StringMap(Type.Union([
      Type.Null(),
      Type.Object({
        type: Type.String({ description: 'conversation, user, bot, integration or workflow' }),
        schema: StringMap(Type.Unknown(), { description: 'JSON Schema every payload of the state must satisfy' }),
        expiry: Type.Optional(Type.Union([Type.Integer({ description: 'Idle milliseconds after which the state expires' }), Type.Null()])),
      }, { additionalProperties: true }),
    ]), { description: 'State declarations (Runtime API states); null removes one' })),
  },
  { additionalProperties: true },
)

export const PageSizeQuery = Type.Optional(Type.Integer({ minimum: 1, maximum: 100 }))
