import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { SMTPConnection } from 'smtp-server/lib/smtp-connection.js';

interface Connection {
  on(event: string, listener: (arg: unknown) => void): void;
  send(code: number, text: string, close?: boolean): void;
  name: string;
  _setListeners(callback: () => void): void;
  connectionReady(): void;
}

interface ServerInternals {
  connections: Set<Connection>;
  options: SMTPServerOptions;
  _onError(err: unknown): void;
  _onClientConnect(data: unknown): void;
}

/**
 * An SMTPServer that greets a client as soon as it connects. smtp-server waits 100 ms first, to
 * catch clients that talk before the greeting (a spam signal on port 25). A submission client
 * authenticates before it can send anything, and the wait capped every connection at one message
 * per 100 ms, the largest cost of a one-message session. Everything else is as smtp-server's
 * own `connect` (smtp-server 3.21): the connection limit, the events, the reverse lookup setting.
 */
export class PromptGreetingServer extends SMTPServer {
  // The ES module, as the server's own: a require() here loaded smtp-server's CommonJS copy too.
  private static readonly Connection = SMTPConnection as unknown as new (server: unknown, socket: unknown, options: unknown) => Connection;

  override connect(socket: unknown, socketOptions: unknown): void {
    const self = this as unknown as ServerInternals;
    const connection = new PromptGreetingServer.Connection(this, socket, socketOptions);
    self.connections.add(connection);
    connection.on('error', (err) => self._onError(err));
    connection.on('connect', (data) => self._onClientConnect(data));
    connection._setListeners(() => {
      if (self.options.maxClients && self.connections.size > self.options.maxClients) {
        return connection.send(421, `${connection.name} Too many connected clients, try again in a moment`, false);
      }
      connection.connectionReady();
    });
  }
}
