import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

interface ManifestChunk {
  file: string;
  src?: string;
  isEntry?: boolean;
  imports?: string[];
  dynamicImports?: string[];
}

/**
 * The JavaScript a browser downloads to show the signed-in shell on its first page (the
 * Overview): the entry chunk, the Overview's chunk, and every chunk they import statically.
 * Sizes are gzip level 9 of each file, as a server or CDN would send them.
 */
export async function firstLoadJavaScript(dist: string): Promise<{ files: string[]; gzipBytes: number }> {
  const manifest = JSON.parse(await readFile(path.join(dist, '.vite', 'manifest.json'), 'utf8')) as Record<
    string,
    ManifestChunk
  >;
  const entry = Object.entries(manifest).find(([, chunk]) => chunk.isEntry)?.[0];
  const overview = Object.keys(manifest).find((key) => key.endsWith('pages/Overview.tsx'));
  if (!entry || !overview) throw new Error('the manifest names no entry or no Overview page');
  const files = new Set<string>();
  const visit = (key: string) => {
    const chunk = manifest[key];
    if (!chunk || files.has(chunk.file)) return;
    files.add(chunk.file);
    for (const imported of chunk.imports ?? []) visit(imported);
  };
  visit(entry);
  visit(overview);
  let gzipBytes = 0;
  for (const file of files) gzipBytes += gzipSync(await readFile(path.join(dist, file)), { level: 9 }).length;
  return { files: [...files], gzipBytes };
}
