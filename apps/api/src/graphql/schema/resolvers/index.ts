// Every resolver of schema.graphql, typed by the generated `Resolvers` signature.
import type { Resolvers } from '../generated/resolvers.js';
import type { GraphQLContext } from '../context.js';
import { Mutation } from './mutation.js';
import { Node } from './node.js';
import { Post } from './post.js';
import { PostConnection } from './post-connection.js';
import { Query } from './query.js';
import { Subscription } from './subscription.js';
import { User } from './user.js';

export const resolvers: Resolvers<GraphQLContext> = { Query, Mutation, Subscription, Node, User, Post, PostConnection };
