import '@copilotkit/react-core/v2/styles.css';
import './page.css';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app.tsx';
import { NoAgentdError, readConnection } from './connection.ts';

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root');
createRoot(root).render(<StrictMode>{page()}</StrictMode>);

/** The chat, or what to do when the page was not told where agentd is. */
function page() {
  try {
    return <App connection={readConnection(window.location.search)} />;
  } catch (e) {
    if (!(e instanceof NoAgentdError)) throw e;
    return (
      <main className="page">
        <p role="alert">{e.message}</p>
      </main>
    );
  }
}
