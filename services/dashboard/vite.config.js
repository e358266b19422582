// The dashboard is served by the API process under /dashboard/ (services/api/src/dashboard/static.ts).
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/dashboard/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // Hashed file names under assets/: the server gives them a year-long immutable cache.
    assetsDir: 'assets',
    sourcemap: false,
    // .vite/manifest.json: which chunks a page loads, for the first-load budget test.
    manifest: true,
    target: 'es2022',
  },
});
