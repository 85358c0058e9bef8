// The in-browser benchmark of wirebench. Served at /bench/ by `wirebench
// serve` and driven by the load engine through the DevTools protocol
// (load/browser.go): it calls window.wirebench.run({kind, calls}) and gets
// back each call's latency, measured here with performance.now() around
// the call as the page's code sees it (fetch and decode, or the Connect
// client, or the WebSocket tunnel), one call at a time.
//
// Kinds (all get user id 1..10 in turn, and check the id that comes back):
//   fetch-json       fetch GET /users/{id}, Accept: application/json, .json()
//   connect          @connectrpc/connect-web, Connect protocol, binary protobuf
//   grpc-web         @connectrpc/connect-web, gRPC-Web, binary protobuf
//   ws-tunnel        gRPC-Web frames carried in WebSocket messages to
//                    /bench/grpc-web-ws (one WebSocket, calls multiplexed by id)
//   connect-stream   UserService.Stream over Connect: one call = the whole list
//   ws-tunnel-stream UserService.Stream through the WebSocket tunnel
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";
import {
  GetUserRequestSchema,
  ListUsersRequestSchema,
  UserSchema,
  UserService,
  type User,
} from "./gen/wirebench_pb";

const ids = 10; // the server must hold users 1..ids

interface RunOptions {
  kind: string;
  calls: number;
}

interface RunResult {
  kind: string;
  latencies_us: number[];
  items: number;
  failed: number;
  first_error: string;
  cross_origin_isolated: boolean;
}

type Call = (i: number) => Promise<number>; // resolves to the items received

function checkUser(u: { id: bigint } | User, want: number): number {
  if (Number(u.id) !== want) throw new Error(`got user ${u.id}, want ${want}`);
  return 1;
}

function checkList(users: User[]): number {
  if (users.length === 0) throw new Error("empty list");
  for (let i = 1; i < users.length; i++) {
    if (users[i].id <= users[i - 1].id) throw new Error("users out of order");
  }
  return users.length;
}

const connectClient = createClient(
  UserService,
  createConnectTransport({ baseUrl: location.origin, useBinaryFormat: true }),
);
const grpcWebClient = createClient(
  UserService,
  createGrpcWebTransport({ baseUrl: location.origin, useBinaryFormat: true }),
);

// WsTunnel speaks wirebench's gRPC-Web-over-WebSocket framing (webbench
// package): a call is one binary message [u32 id][u8 path length][path]
// [gRPC-Web request body]; the reply is one or more messages [u32 id]
// [piece of the gRPC-Web response body], ended by the trailer frame.
class WsTunnel {
  private ws: WebSocket;
  private next = 1;
  private calls = new Map<number, Pending>();

  private constructor(ws: WebSocket) {
    this.ws = ws;
    ws.binaryType = "arraybuffer";
    ws.onmessage = (ev) => this.onMessage(new Uint8Array(ev.data as ArrayBuffer));
    ws.onclose = () => {
      for (const p of this.calls.values()) p.reject(new Error("tunnel closed"));
      this.calls.clear();
    };
  }

  static open(url: string): Promise<WsTunnel> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url);
      ws.onopen = () => resolve(new WsTunnel(ws));
      ws.onerror = () => reject(new Error("tunnel: WebSocket failed"));
    });
  }

  // call sends one request message and resolves to the response messages.
  call(path: string, req: Uint8Array): Promise<Uint8Array[]> {
    const id = this.next++;
    const p = new TextEncoder().encode(path);
    const msg = new Uint8Array(4 + 1 + p.length + 5 + req.length);
    const dv = new DataView(msg.buffer);
    dv.setUint32(0, id);
    msg[4] = p.length;
    msg.set(p, 5);
    let off = 5 + p.length;
    msg[off] = 0;
    dv.setUint32(off + 1, req.length);
    msg.set(req, off + 5);
    return new Promise((resolve, reject) => {
      this.calls.set(id, new Pending(resolve, reject));
      this.ws.send(msg);
    });
  }

  private onMessage(b: Uint8Array) {
    const id = new DataView(b.buffer, b.byteOffset).getUint32(0);
    const p = this.calls.get(id);
    if (!p) return;
    if (p.feed(b.subarray(4))) this.calls.delete(id);
  }
}

// Pending gathers one call's gRPC-Web response frames.
class Pending {
  private buf = new Uint8Array(0);
  private msgs: Uint8Array[] = [];
  constructor(
    private resolve: (m: Uint8Array[]) => void,
    readonly reject: (e: Error) => void,
  ) {}

  // feed returns true when the call is over.
  feed(piece: Uint8Array): boolean {
    const joined = new Uint8Array(this.buf.length + piece.length);
    joined.set(this.buf);
    joined.set(piece, this.buf.length);
    let off = 0;
    while (joined.length - off >= 5) {
      const flag = joined[off];
      const n = new DataView(joined.buffer, off + 1).getUint32(0);
      if (joined.length - off - 5 < n) break;
      const body = joined.subarray(off + 5, off + 5 + n);
      off += 5 + n;
      if (flag & 0x80) {
        const trailers = new TextDecoder().decode(body);
        const m = /grpc-status:\s*(\d+)/i.exec(trailers);
        if (!m || m[1] !== "0") this.reject(new Error(`tunnel: ${trailers.trim()}`));
        else this.resolve(this.msgs);
        return true;
      }
      this.msgs.push(body);
    }
    this.buf = joined.slice(off);
    return false;
  }
}

let tunnel: Promise<WsTunnel> | undefined;
function getTunnel(): Promise<WsTunnel> {
  if (!tunnel) {
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    tunnel = WsTunnel.open(`${proto}//${location.host}/bench/grpc-web-ws`);
  }
  return tunnel;
}

const calls: Record<string, Call> = {
  "fetch-json": async (i) => {
    const id = 1 + (i % ids);
    const r = await fetch(`/users/${id}`, { headers: { Accept: "application/json" } });
    if (r.status !== 200) throw new Error(`status ${r.status}`);
    return checkUser((await r.json()) as { id: bigint }, id);
  },
  connect: async (i) => {
    const id = 1 + (i % ids);
    return checkUser(await connectClient.get({ id: BigInt(id) }), id);
  },
  "grpc-web": async (i) => {
    const id = 1 + (i % ids);
    return checkUser(await grpcWebClient.get({ id: BigInt(id) }), id);
  },
  "ws-tunnel": async (i) => {
    const id = 1 + (i % ids);
    const t = await getTunnel();
    const req = toBinary(GetUserRequestSchema, create(GetUserRequestSchema, { id: BigInt(id) }));
    const msgs = await t.call("/wirebench.v1.UserService/Get", req);
    if (msgs.length !== 1) throw new Error(`${msgs.length} replies`);
    return checkUser(fromBinary(UserSchema, msgs[0]), id);
  },
  "connect-stream": async () => {
    const users: User[] = [];
    for await (const u of connectClient.stream({})) users.push(u);
    return checkList(users);
  },
  "ws-tunnel-stream": async () => {
    const t = await getTunnel();
    const req = toBinary(ListUsersRequestSchema, create(ListUsersRequestSchema, {}));
    const msgs = await t.call("/wirebench.v1.UserService/Stream", req);
    return checkList(msgs.map((m) => fromBinary(UserSchema, m)));
  },
};

async function run(o: RunOptions): Promise<RunResult> {
  const call = calls[o.kind];
  if (!call) throw new Error(`unknown kind ${o.kind} (have ${Object.keys(calls).join(", ")})`);
  const res: RunResult = {
    kind: o.kind,
    latencies_us: [],
    items: 0,
    failed: 0,
    first_error: "",
    cross_origin_isolated: self.crossOriginIsolated === true,
  };
  for (let i = 0; i < o.calls; i++) {
    const t0 = performance.now();
    try {
      res.items += await call(i);
      res.latencies_us.push((performance.now() - t0) * 1000);
    } catch (e) {
      res.failed++;
      if (!res.first_error) res.first_error = String(e);
    }
  }
  return res;
}

declare global {
  interface Window {
    wirebench: { run: typeof run; kinds: string[]; ready: boolean };
  }
}
window.wirebench = { run, kinds: Object.keys(calls), ready: true };
const status = document.getElementById("status");
if (status) status.textContent = `ready: ${Object.keys(calls).join(", ")}`;
