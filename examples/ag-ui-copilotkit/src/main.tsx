import '@copilotkit/react-core/v2/styles.css';
import './page.css';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app.tsx';
import { readConnection } from './connection.ts';

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root');
createRoot(root).render(
  <StrictMode>
    <App connection={readConnection(window.location.search)} />
  </StrictMode>,
);
