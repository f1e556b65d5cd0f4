// What a resolver's value is asked for: the field names of its selection set (through fragments), so a loader reads
// only the columns the answer needs.
//
// Written by hand (a look-ahead of one level; graphql-parse-resolve-info resolves whole trees with arguments and
// directives and costs more per call than the columns it saves). Over-approximates on purpose: a field under
// `@include(if: false)` or in a fragment on another type still counts, since reading one column more is harmless and
// reading one fewer would answer a wrong null.
import { Kind, type FieldNode, type FragmentDefinitionNode, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';

/** Per field node of the document (documents are parsed once and kept), the names its selection asks for. */
const namesByField = new WeakMap<FieldNode, ReadonlySet<string>>();

function collect(
  selectionSet: SelectionSetNode | undefined,
  fragments: Record<string, FragmentDefinitionNode>,
  names: Set<string>,
  seen: Set<string>,
): void {
  for (const selection of selectionSet?.selections ?? []) {
    if (selection.kind === Kind.FIELD) names.add(selection.name.value);
    else if (selection.kind === Kind.INLINE_FRAGMENT) collect(selection.selectionSet, fragments, names, seen);
    else if (!seen.has(selection.name.value)) {
      seen.add(selection.name.value); // validation forbids cycles; this bounds the walk regardless
      collect(fragments[selection.name.value]?.selectionSet, fragments, names, seen);
    }
  }
}

/** The field names asked of the value the resolver of `info` returns (of each item, for a list). */
export function selectedFieldNames(info: Pick<GraphQLResolveInfo, 'fieldNodes' | 'fragments'>): ReadonlySet<string> {
  const first = info.fieldNodes[0]!;
  let names = info.fieldNodes.length === 1 ? namesByField.get(first) : undefined;
  if (!names) {
    const collected = new Set<string>();
    for (const node of info.fieldNodes) collect(node.selectionSet, info.fragments, collected, new Set());
    names = collected;
    if (info.fieldNodes.length === 1) namesByField.set(first, names);
  }
  return names;
}
