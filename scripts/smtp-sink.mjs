// A real SMTP server for the README's tour (scripts/tour.sh): it accepts every message and writes it, as received, to
// `<dir>/<time>-<n>.eml`, the layout the server's own outbox has without SMTP_URL, so the tour reads mail the same way
// either way. Prints its port, then runs until killed. Usage: node scripts/smtp-sink.mjs <dir>
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SMTPServer } from 'smtp-server';

const dir = process.argv[2];
if (!dir) throw new Error('usage: node scripts/smtp-sink.mjs <dir>');
mkdirSync(dir, { recursive: true });
let count = 0;
const server = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS'],
  logger: false,
  onData(stream, _session, callback) {
    const chunks = [];
    stream.on('data', (chunk) => chunks.push(chunk));
    stream.on('end', () => {
      const file = path.join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}-smtp-${++count}.eml`);
      writeFileSync(file, Buffer.concat(chunks));
      callback();
    });
  },
});
server.listen(0, '127.0.0.1', () => console.log(server.server.address().port));
