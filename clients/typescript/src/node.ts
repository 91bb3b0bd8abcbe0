// The client from Node: gRPC over HTTP/2 (@connectrpc/connect-node).

import type { Interceptor, Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { GameClient, type ClientOptions } from "./client.js";

/** "host:port" or a URL ("http://host:port") as a base URL. */
export function baseUrl(addr: string): string {
  return /^https?:\/\//.test(addr) ? addr : `http://${addr}`;
}

/** A gRPC transport to the server at `addr` (plaintext unless an https URL). */
export function grpcTransport(addr: string, interceptors: Interceptor[] = []): Transport {
  return createGrpcTransport({ baseUrl: baseUrl(addr), interceptors });
}

/** A client of the server at `addr` ("127.0.0.1:50051") over gRPC. */
export function connect(
  addr: string,
  options: ClientOptions & { interceptors?: Interceptor[] } = {},
): GameClient {
  return new GameClient(grpcTransport(addr, options.interceptors), options);
}
