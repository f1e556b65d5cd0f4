// The GraphQL documents this client ships: registered with the server as trusted documents (`pnpm documents:manifest`
// extracts every `/* GraphQL */` document below into packages/client/persisted-documents.json), typed by the contract.
import type { Post, User } from '@users-posts/contracts';
import { gql } from './graphql.js';

type UserFields = Pick<User, 'id' | 'name' | 'email' | 'role' | 'version'>;
type PostFields = Pick<Post, 'id' | 'title' | 'content' | 'createdAt'> & { author: Pick<User, 'id' | 'name'> };

/** The signed-in user, with the version an update may be conditioned on. */
export const CurrentUserDocument = gql<{ currentUser: UserFields }>(/* GraphQL */ `
  query CurrentUser {
    currentUser { id name email role version }
  }
`);

/** One user by id (null when there is none). */
export const UserDocument = gql<{ user: UserFields | null }, { id: string }>(/* GraphQL */ `
  query User($id: ID!) {
    user(id: $id) { id name email role version }
  }
`);

/** Updates a user; with `expectedVersion`, only if nobody changed it since it was read (else CONFLICT). */
export const UpdateUserDocument = gql<
  { updateUser: UserFields },
  { id: string; input: { name?: string; email?: string }; expectedVersion?: number }
>(/* GraphQL */ `
    mutation UpdateUser($id: ID!, $input: UpdateUserInput!, $expectedVersion: Int) {
      updateUser(id: $id, input: $input, expectedVersion: $expectedVersion) { id name email role version }
    }
  `);

/** A page of posts, newest last, by Relay cursor. */
export const PostsPageDocument = gql<
  {
    postsConnection: {
      edges: { cursor: string; node: PostFields }[];
      pageInfo: { endCursor: string | null; hasNextPage: boolean };
      totalCount: number;
    };
  },
  { first?: number; after?: string }
>(/* GraphQL */ `
  query PostsPage($first: Int, $after: String) {
    postsConnection(first: $first, after: $after) {
      edges { cursor node { id title content createdAt author { id name } } }
      pageInfo { endCursor hasNextPage }
      totalCount
    }
  }
`);

/** Writes a post as `authorId` (the caller, unless an admin). */
export const CreatePostDocument = gql<{ createPost: PostFields }, { title: string; content: string; authorId: string }>(/* GraphQL */ `
  mutation CreatePost($title: String!, $content: String!, $authorId: ID!) {
    createPost(title: $title, content: $content, authorId: $authorId) { id title content createdAt author { id name } }
  }
`);

/** Every new post, as it is created (WebSocket or SSE). */
export const PostCreatedDocument = gql<{ postCreated: PostFields }>(/* GraphQL */ `
  subscription PostCreated {
    postCreated { id title content createdAt author { id name } }
  }
`);
