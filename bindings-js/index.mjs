// lowdown-core for ES modules: index.js, loaded with require. When no build of the core
// loads, the failure is then this module's own exception, which every importer can catch;
// Node 20 rethrows a CommonJS module's load failure, imported from ES modules, as an
// uncaught exception after the import was caught (it killed the proxy's relay).

import { createRequire } from 'node:module';

export default createRequire(import.meta.url)('./index.js');
