import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// `npm run dev` serves the page at http://localhost:5173 (the origin agent.yml allows); `npm run preview`
// serves the built page at http://localhost:4173.
export default defineConfig({
  plugins: [react()],
  server: { port: 5173, strictPort: true },
  preview: { port: 4173, strictPort: true },
});
