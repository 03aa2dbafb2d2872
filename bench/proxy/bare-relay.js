// The floor for any Node stdio proxy: spawn, pipe both ways, exit with the child's code.
import { spawn } from 'node:child_process';

const child = spawn(process.argv[2], process.argv.slice(3), { stdio: ['pipe', 'pipe', 'inherit'] });
process.stdin.pipe(child.stdin);
child.stdout.pipe(process.stdout);
child.on('exit', (code) => process.exit(code ?? 1));
