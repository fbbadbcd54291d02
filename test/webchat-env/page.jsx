// The host page of test/browser/botpress-webchat.test.ts: Botpress's own React webchat (@botpress/webchat 4.5.2),
// unchanged, pointed at Parley's webchat API. The HTML sets window.PARLEY = { clientId, apiUrl } before this bundle
// runs. Plain JSX rather than .tsx: the root tsconfig takes in test/, and the webchat's types need @types/react.
import { createRoot } from 'react-dom/client'
import { Webchat } from '@botpress/webchat'

const { clientId, apiUrl } = window.PARLEY

createRoot(document.getElementById('root')).render(
  <Webchat
    clientId={clientId}
    apiUrl={apiUrl}
    configuration={{ botName: 'Parley demo', botDescription: 'The official webchat on Parley', feedbackEnabled: true, allowFileUpload: true }}
    style={{ width: '100%', height: '100%' }}
  />,
)
