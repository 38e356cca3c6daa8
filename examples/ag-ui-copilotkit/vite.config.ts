import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The launcher (`npm start`, tools/ag-ui-example) runs the dev server on the port it chose (--port,
// --strictPort) and tells the page agentd's URL (VITE_AGENTD_URL, read by src/connection.ts).
export default defineConfig({
  plugins: [react()],
});
