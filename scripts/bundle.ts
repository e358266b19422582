// `npm run build` (after the type check and the dashboard's build): bundles each process into one
// file under dist/, which is what the container image runs (`node dist/api.js`, ...), with the
// built dashboard in dist/dashboard. How: scripts/bundle-processes.ts.
//
//   node --import tsx scripts/bundle.ts [--outdir dist] [--metafile FILE]
import { parseArgs } from 'node:util';
import { bundleProcesses } from './bundle-processes.js';

const { values } = parseArgs({
  options: { outdir: { type: 'string', default: 'dist' }, metafile: { type: 'string' } },
});

await bundleProcesses({ outdir: values.outdir, metafile: values.metafile });
