#!/usr/bin/env node
// A small MCP server written with the official TypeScript SDK (pinned in .ci/sdk-clients), whose
// tool takes a recursive value: the SDK writes its input schema in draft-07, with `definitions`
// and `$ref: "#/definitions/..."`, as every server built on it does for a recursive type. The
// gateway's dialect tests (tests/gateway_dialects.rs) run it behind teaagent.
//
//   node recursive_server.mjs          (stdio)

import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const modules =
  process.env.SDK_CLIENTS_NODE_MODULES ??
  fileURLToPath(new URL('../../../.ci/sdk-clients/node_modules/', import.meta.url));
const load = (rel) => import(pathToFileURL(path.join(modules, rel)).href);

const { McpServer } = await load('@modelcontextprotocol/sdk/dist/esm/server/mcp.js');
const { StdioServerTransport } = await load('@modelcontextprotocol/sdk/dist/esm/server/stdio.js');
const { z } = await load('zod/index.js');

const Node = z.lazy(() => z.object({ name: z.string().max(8), children: z.array(Node) }));

const server = new McpServer({ name: 'recursive', version: '1.0.0' });
server.registerTool(
  'count_nodes',
  {
    description: 'Count the nodes of a tree.',
    inputSchema: { tree: Node },
  },
  async ({ tree }) => {
    const count = (n) => 1 + n.children.reduce((sum, c) => sum + count(c), 0);
    return { content: [{ type: 'text', text: String(count(tree)) }] };
  },
);
await server.connect(new StdioServerTransport());
