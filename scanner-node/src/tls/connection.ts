// A TCP connection with an input buffer and "wait until the buffer says X" reads, so protocol
// steps (STARTTLS dialogues, TLS records) are written as straight-line code with one deadline.
import { Socket } from "node:net";

export class ProbeTimeout extends Error { override name = "ProbeTimeout"; }
export class ConnectionClosed extends Error { override name = "ConnectionClosed"; }
export class ConnectError extends Error {
  override name = "ConnectError";
  constructor(message: string, readonly code?: string) { super(message); }
}

/** Bytes of server input kept at most; anything larger is a fault of the peer. */
export const MAX_INPUT = 512 * 1024;

export class Connection {
  buf: Buffer = Buffer.alloc(0);
  private ended: Error | null = null;
  private wake: (() => void) | null = null;
  private constructor(readonly socket: Socket, readonly deadline: number) {
    socket.on("data", (d: Buffer) => {
      this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
      if (this.buf.length > MAX_INPUT) {
        this.ended = new ConnectionClosed(`server sent more than ${MAX_INPUT} bytes`);
        socket.destroy();
      }
      this.wake?.();
    });
    socket.on("error", (e: NodeJS.ErrnoException) => { this.ended ??= new ConnectionClosed(`connection ${e.code === "ECONNRESET" ? "reset by server" : "error: " + e.message}`); this.wake?.(); });
    socket.on("close", () => { this.ended ??= new ConnectionClosed("connection closed by server"); this.wake?.(); });
  }

  static open(host: string, port: number, timeoutMs: number): Promise<Connection> {
    const deadline = Date.now() + timeoutMs;
    return new Promise((resolve, reject) => {
      const socket = new Socket();
      socket.setNoDelay(true);
      const timer = setTimeout(() => { socket.destroy(); reject(new ProbeTimeout(`connect to ${host}:${port} timed out after ${timeoutMs} ms`)); }, timeoutMs);
      socket.once("error", (e: NodeJS.ErrnoException) => { clearTimeout(timer); socket.destroy(); reject(new ConnectError(`connect to ${host}:${port} failed: ${e.code ?? e.message}`, e.code)); });
      socket.connect({ host, port }, () => {
        clearTimeout(timer);
        socket.removeAllListeners("error");
        resolve(new Connection(socket, deadline));
      });
    });
  }

  write(b: Buffer | string): void { if (!this.socket.destroyed) this.socket.write(b); }

  /** Consumes the first n bytes of the buffer. */
  take(n: number): Buffer { const b = this.buf.subarray(0, n); this.buf = this.buf.subarray(n); return b; }

  /**
   * Resolves with check(buffer) once it returns a value; rejects with ProbeTimeout at the deadline
   * or ConnectionClosed when the peer goes away with check still undecided.
   */
  async until<T>(check: (buf: Buffer) => T | undefined, what: string): Promise<T> {
    for (;;) {
      const v = check(this.buf);
      if (v !== undefined) return v;
      if (this.ended) throw this.ended;
      const left = this.deadline - Date.now();
      if (left <= 0) throw new ProbeTimeout(`timed out waiting for ${what}`);
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((res) => { this.wake = res; timer = setTimeout(res, left); });
      clearTimeout(timer);
      this.wake = null;
    }
  }

  close(): void { this.socket.destroy(); }
}
