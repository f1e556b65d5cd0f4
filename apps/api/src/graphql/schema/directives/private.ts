// Enforces `@private` from the schema itself: every annotated field is wrapped once, and shows its value only to those the
// domain's rule allows (services/visibility.ts), per caller: lists, nested authors and each subscriber of an event alike.
import { getDirective, MapperKind, mapSchema } from '@graphql-tools/utils';
import { defaultFieldResolver, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql';
import type { Principal } from '../../../auth/principal.js';
import { hiddenValueOf, isPrivateType, mayReadPrivate, privateFieldsOf, type PrivateType } from '../../../services/visibility.js';

function shownTo<Context extends { principal: Principal }>(
  resolver: GraphQLFieldResolver<{ id: number }, Context>,
  type: PrivateType,
  hidden: '' | null,
): GraphQLFieldResolver<{ id: number }, Context> {
  return (source, args, context, info) => (mayReadPrivate(context.principal, type, source) ? resolver(source, args, context, info) : hidden);
}

export function privateDirectiveTransformer(schema: GraphQLSchema): GraphQLSchema {
  return mapSchema(schema, {
    [MapperKind.OBJECT_FIELD]: (field, fieldName, typeName) => {
      if (!getDirective(schema, field, 'private')?.length) return field;
      // The contracts' table (codegen) names the same fields: a @private field the table lacks is a stale codegen.
      if (!isPrivateType(typeName) || !privateFieldsOf(typeName).has(fieldName)) {
        throw new Error(`${typeName}.${fieldName} is @private in the schema but not in PRIVATE_FIELDS: run pnpm codegen`);
      }
      return { ...field, resolve: shownTo(field.resolve ?? defaultFieldResolver, typeName, hiddenValueOf(typeName, fieldName)) };
    },
  });
}
