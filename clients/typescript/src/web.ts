// The client from a browser: grpc-web over fetch (@connectrpc/connect-web).
// The server answers grpc-web and CORS itself, so a page needs no proxy.

import type { Interceptor, Transport } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import { GameClient, type ClientOptions } from "./client.js";

export interface WebOptions extends ClientOptions {
  interceptors?: Interceptor[];
  /** A fetch of your own (the global one by default). */
  fetch?: typeof globalThis.fetch;
}

/** A grpc-web transport to the server at `baseUrl` ("http://host:port"). */
export function grpcWebTransport(baseUrl: string, options: WebOptions = {}): Transport {
  return createGrpcWebTransport({
    baseUrl,
    useBinaryFormat: true,
    interceptors: options.interceptors ?? [],
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}

/** A client of the server at `baseUrl` over grpc-web, as a page uses it. */
export function connectWeb(baseUrl: string, options: WebOptions = {}): GameClient {
  return new GameClient(grpcWebTransport(baseUrl, options), options);
}
