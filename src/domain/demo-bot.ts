/**
 * The code of the demo bot created at first start (and restored by `parley demo`). It shows the platform:
 * a greeting workflow, a workflow with captures, every payload type on request, state across turns, and
 * an echo. It is ordinary bot code (see docs/bot-code.md), deployed like any other. Its image, audio, video
 * and PDF are served by the server itself (GET /demo/assets/…, files in assets/demo/), at `publicUrl`.
 */
export function demoBotCode(publicUrl: string): string {
  return DEMO_BOT_TEMPLATE.replace('__PARLEY_ASSETS__', JSON.stringify(`${publicUrl.replace(/\/+$/, '')}/demo/assets/`))
}

const DEMO_BOT_TEMPLATE = String.raw`
const assets = __PARLEY_ASSETS__
const image = assets + 'parley.svg'
const samples = {
  text: { type: 'text', text: 'This is a text message.' },
  markdown: { type: 'markdown', markdown: '**Markdown** with _emphasis_, a [link](https://example.com) and a list:\n\n- one\n- two' },
  image: { type: 'image', imageUrl: image },
  audio: { type: 'audio', audioUrl: assets + 'sample.wav' },
  video: { type: 'video', videoUrl: assets + 'sample.webm' },
  file: { type: 'file', fileUrl: assets + 'sample.pdf', title: 'A sample PDF' },
  location: { type: 'location', latitude: 45.5017, longitude: -73.5673, address: 'Montréal, QC', title: 'Montréal' },
  card: { type: 'card', title: 'A card', subtitle: 'With an image and actions', imageUrl: image, actions: [
    { action: 'postback', label: 'Say hello', value: 'hello' },
    { action: 'say', label: 'Show a carousel', value: 'show carousel' },
    { action: 'url', label: 'Open example.com', value: 'https://example.com' },
  ] },
  carousel: { type: 'carousel', items: [
    { type: 'card', title: 'First card', subtitle: 'One', imageUrl: image, actions: [{ action: 'postback', label: 'Pick one', value: 'one' }] },
    { type: 'card', title: 'Second card', subtitle: 'Two', imageUrl: image, actions: [{ action: 'postback', label: 'Pick two', value: 'two' }] },
  ] },
  choice: { type: 'choice', text: 'Pick a colour', options: [{ label: 'Red', value: 'red' }, { label: 'Green', value: 'green' }, { label: 'Blue', value: 'blue' }] },
  dropdown: { type: 'dropdown', text: 'Pick a country', options: [{ label: 'Canada', value: 'CA' }, { label: 'France', value: 'FR' }, { label: 'Japan', value: 'JP' }] },
  bloc: { type: 'bloc', items: [{ type: 'text', text: 'A bloc groups items:' }, { type: 'image', imageUrl: image }, { type: 'markdown', markdown: '_and markdown_' }] },
}
const help = { type: 'choice', text: 'I can show every message type, or sign you up. Try one:', options: [
  ...Object.keys(samples).map((name) => ({ label: 'Show ' + name, value: 'show ' + name })),
  { label: 'Sign up', value: 'sign up' },
] }

export const hooks = {
  async afterIncoming({ event, client, state, handledByWorkflow }) {
    state.conversation.messages = (state.conversation.messages || 0) + 1
    if (handledByWorkflow || event.type === 'custom') return
    const say = (payload) => client.createMessage({ conversationId: event.conversationId, payload })
    // Human handoff (README "Human handoff"): a person answers until the conversation comes back.
    if (event.type === 'handoff_started') return say({ type: 'text', text: 'A person will answer you here shortly.' })
    if (event.type === 'handoff_ended') return say({ type: 'text', text: 'You are back with the demo bot. Type "help" for more.' })
    const text = event.preview.trim().toLowerCase()
    if (text === 'help' || text === 'menu') return say(help)
    const sample = samples[text.replace(/^show\s+/, '')]
    if (sample) return say(sample)
    const name = state.user.name ? ', ' + state.user.name : ''
    return say({ type: 'text', text: 'You said: ' + event.preview + ' (message ' + state.conversation.messages + name + '). Type "help" for more.' })
  },
}

export const workflows = {
  welcome: {
    trigger: { type: 'conversationStarted' },
    nodes: { hello: { cards: [
      { type: 'say', text: 'Hi! I am the Parley demo bot. Type "help" to see what I can do.' },
    ] } },
  },
  signup: {
    trigger: { type: 'message', pattern: '^(sign ?up|register)$', flags: 'i' },
    nodes: {
      ask: { cards: [
        { type: 'capture', variable: 'name', prompt: 'What is your name?' },
        { type: 'capture', variable: 'email', prompt: 'And your email, {{vars.name}}?', validate: { type: 'email' }, retryPrompt: 'That does not look like an email address. Try again?' },
        { type: 'execute', code: 'state.user.name = vars.name; state.user.email = vars.email' },
        { type: 'say', text: 'Thanks {{vars.name}}, you are signed up with {{vars.email}}.' },
      ] },
    },
  },
}
`
