// Relay's Global Object Identification (SPEC §2): a User's or a Post's `nodeId`, unique across types, beside the row
// `id` that REST and the seed's cache key use. The format is PostGraphile's classic one, base64 of `["User",1]`:
// opaque to clients, readable in a log. Written by hand: graphql-relay's toGlobalId is `User:1` in base64, which would
// do too, but pulls in a package for two functions.

/** The types that implement Node. */
export type NodeType = 'User' | 'Post';

export function encodeNodeId(type: NodeType, id: number): string {
  return Buffer.from(JSON.stringify([type, id])).toString('base64');
}

/** The type and row id a nodeId stands for, or null for anything that is not one this server issued the shape of. */
export function decodeNodeId(nodeId: string): { type: NodeType; id: number } | null {
  if (nodeId.length > 64) return null;
  try {
    const value: unknown = JSON.parse(Buffer.from(nodeId, 'base64').toString('utf8'));
    if (!Array.isArray(value) || value.length !== 2) return null;
    const [type, id] = value as [unknown, unknown];
    if ((type !== 'User' && type !== 'Post') || !Number.isSafeInteger(id) || (id as number) < 1) return null;
    return { type, id: id as number };
  } catch {
    return null;
  }
}
