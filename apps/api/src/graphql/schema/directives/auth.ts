// Enforces `@auth(requires: Role)` from the schema itself: every annotated field (or field of an annotated type) is wrapped once.
import { getDirective, MapperKind, mapSchema } from '@graphql-tools/utils';
import type { Role } from '@users-posts/db';
import { defaultFieldResolver, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql';
import { requireRole, type Principal } from '../../../auth/principal.js';

interface AuthArgs {
  requires?: Role;
}

function guarded<Source, Context extends { principal: Principal }>(
  resolver: GraphQLFieldResolver<Source, Context>,
  role: Role,
): GraphQLFieldResolver<Source, Context> {
  return (source, args, context, info) => {
    requireRole(context.principal, role);
    return resolver(source, args, context, info);
  };
}

export function authDirectiveTransformer(schema: GraphQLSchema): GraphQLSchema {
  // bound: types of the schema, built at start
  const typeRequirements = new Map<string, Role>();
  return mapSchema(schema, {
    [MapperKind.OBJECT_TYPE]: (type) => {
      const directive = getDirective(schema, type, 'auth')?.[0] as AuthArgs | undefined;
      if (directive) typeRequirements.set(type.name, directive.requires ?? 'USER');
      return undefined;
    },
    [MapperKind.OBJECT_FIELD]: (field, _name, typeName) => {
      const directive = getDirective(schema, field, 'auth')?.[0] as AuthArgs | undefined;
      const role = directive ? (directive.requires ?? 'USER') : typeRequirements.get(typeName);
      if (!role) return field;
      return {
        ...field,
        resolve: guarded(field.resolve ?? defaultFieldResolver, role),
        ...(field.subscribe ? { subscribe: guarded(field.subscribe, role) } : {}),
      };
    },
  });
}
