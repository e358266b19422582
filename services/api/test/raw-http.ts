import { connect } from 'node:net';

/** An answer read off the socket as it came: the status line, headers (names lowercased) and body. */
export interface RawReply {
  statusLine: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends bytes no HTTP client would send to the server at `url`, and reads the reply until the
 * server closes the connection (every refusal before Express closes it).
 */
export function sendRaw(url: string, request: string): Promise<RawReply> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const [head = '', body = ''] = text.split('\r\n\r\n', 2);
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(
        lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      );
      resolve({ statusLine, headers, body });
    });
    socket.write(request, 'latin1');
  });
}
