// Type tests (checked by `pnpm typecheck`, not run): handlers typed by operationId reject shapes the contract forbids.
import type { OperationHandler, OperationInput } from '../src/index.js';

type Ctx = Record<string, never>;
const user = { id: 1, name: 'Ada', email: 'ada@example.com', age: null, role: 'USER' as const, createdAt: '', updatedAt: '' };

// The declared success shape compiles.
export const getUserOk: OperationHandler<'getUser', Ctx> = async () => ({ status: 200, body: { code: 0, message: 'ok', data: user } });

// @ts-expect-error — a body missing a required field (`email`) of User.
export const missingField: OperationHandler<'getUser', Ctx> = async () => ({
  status: 200,
  body: { code: 0, message: 'ok', data: { ...user, email: undefined } },
});

// @ts-expect-error — a field of the wrong type (`id` as a string).
export const wrongType: OperationHandler<'getUser', Ctx> = async () => ({
  status: 200,
  body: { code: 0, message: 'ok', data: { ...user, id: '1' } },
});

// @ts-expect-error — a status the operation does not declare.
export const undeclaredStatus: OperationHandler<'getUser', Ctx> = async () => ({ status: 201, body: { code: 0, message: 'ok', data: user } });

// @ts-expect-error — a role outside the enum.
export const badEnum: OperationHandler<'getUser', Ctx> = async () => ({
  status: 200,
  body: { code: 0, message: 'ok', data: { ...user, role: 'ROOT' } },
});

// Inputs are typed from the contract: path ids are numbers, list filters are the enum.
export function inputs(getUser: OperationInput<'getUser'>, listUsers: OperationInput<'listUsers'>): void {
  const id: number = getUser.params.id;
  const role: 'ADMIN' | 'USER' | undefined = listUsers.query.role;
  // @ts-expect-error — getUser declares no query parameter `page`.
  void getUser.query.page;
  void id;
  void role;
}
