// The orders domain: a user's orders, readable and writable by that user or an ADMIN; the owner may only cancel.
import type { Order, OrderStatus, PrismaClient, SqlReader } from '@users-posts/db';
import { ENUM_VALUES } from '@users-posts/contracts';
import { canActFor, requireAuthenticated, type AuthenticatedPrincipal, type Principal } from '../auth/principal.js';
import { CREATED_AT_FIELD, findPage, ID_FIELD, type PageResult, type PageSource } from '../collections/page.js';
import type { CollectionQuery } from '../collections/query.js';
import { DEFAULT_COLLECTION_LIMITS, type CollectionLimits } from '../config/collection-limits.js';
import { AppError } from '../errors/app-error.js';
import { parseId } from './ids.js';
import { translatePrismaError } from '../errors/prisma.js';
import { lockExpected, type Expectation } from './preconditions.js';
import { storedAsIs } from './storage-mapping.js';
import { validateInput, type ContractInput, type Unvalidated } from './validation.js';

/** SPEC §4 allow-list for sorting orders. */
/** The allow-list of openapi.yaml (`OrderSortField`, whose forms `sort` and `sortBy` enumerate): one source for both doors. */
export const ORDER_SORT_FIELDS = ENUM_VALUES.OrderSortField;
export type OrderSortField = (typeof ORDER_SORT_FIELDS)[number];

/** The contract's OrderStatus, in its order: the PostgreSQL enum's, which `ORDER BY status` sorts by (contracts:check compares them). */
export const ORDER_STATUSES = ENUM_VALUES.OrderStatus satisfies readonly OrderStatus[];

/** A new order: the contract's CreateOrderInput. */
export type NewOrder = Unvalidated<ContractInput<'CreateOrderInput'>>;

export interface OrderFilter {
  status?: OrderStatus | undefined;
}

/** Every column of `orders` under the model's field names (see PUBLIC_USER_COLUMNS in users.ts). */
export const ORDER_COLUMNS = 'id, user_id AS "userId", product, quantity, total_cents AS "totalCents", status, created_at AS "createdAt", version';

/** The orders collection for the pager (`status` compares in enum order, as PostgreSQL sorts it). */
const ORDERS_PAGE: PageSource<OrderSortField | 'userId' | 'product'> = {
  collection: 'orders',
  table: 'orders',
  columns: ORDER_COLUMNS,
  fields: {
    id: ID_FIELD,
    createdAt: CREATED_AT_FIELD,
    totalCents: { column: 'total_cents', kind: 'integer' },
    status: { column: 'status', kind: ORDER_STATUSES, cast: '"OrderStatus"' },
    userId: { column: 'user_id', kind: 'integer' },
    product: { column: 'product', kind: 'string' },
  },
};

export class OrdersService {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly sql: SqlReader,
    private readonly limits: CollectionLimits = DEFAULT_COLLECTION_LIMITS,
  ) {}

  /**
   * The caller may act on user `userId`'s orders: that user or an ADMIN, else 403 (whether or not the user exists);
   * 404 when the user does not exist. Returns the database id.
   */
  private async authorize(principal: Principal, userId: string | number): Promise<{ caller: AuthenticatedPrincipal; userId: number }> {
    const caller = requireAuthenticated(principal);
    const dbId = parseId(userId);
    if (dbId === null || !canActFor(caller, dbId)) {
      if (caller.role !== 'ADMIN') throw new AppError('FORBIDDEN', 'You may only act on your own orders');
      throw new AppError('NOT_FOUND', 'User not found');
    }
    if (!(await this.prisma.user.findUnique({ where: { id: dbId }, select: { id: true } }))) throw new AppError('NOT_FOUND', 'User not found');
    return { caller, userId: dbId };
  }

  private async find(userId: number, orderId: string | number): Promise<Order> {
    const dbId = parseId(orderId);
    const order = dbId === null ? null : await this.prisma.order.findFirst({ where: { id: dbId, userId } });
    if (!order) throw new AppError('NOT_FOUND', 'Order not found');
    return order;
  }

  /** One page of a user's orders (filter by status, search over product). */
  async page(
    principal: Principal,
    userId: string | number,
    query: CollectionQuery<OrderSortField>,
    filter: OrderFilter = {},
  ): Promise<PageResult<Order>> {
    const owner = await this.authorize(principal, userId);
    return findPage(this.sql, ORDERS_PAGE, query, { equal: { userId: owner.userId, status: filter.status }, searchIn: ['product'] }, this.limits);
  }

  async get(principal: Principal, userId: string | number, orderId: string | number): Promise<Order> {
    const owner = await this.authorize(principal, userId);
    return this.find(owner.userId, orderId);
  }

  /** A new `pending` order of user `userId`. */
  async create(principal: Principal, userId: string | number, input: NewOrder): Promise<Order> {
    const owner = await this.authorize(principal, userId);
    validateInput('CreateOrderInput', input);
    try {
      return await this.prisma.order.create({ data: { ...storedAsIs('Order', input), userId: owner.userId, status: 'pending' } });
    } catch (error) {
      translatePrismaError(error, { foreignKey: 'User not found' });
    }
  }

  /** Moves the status: the owner may only set `cancelled`, an ADMIN any status. */
  async updateStatus(
    principal: Principal,
    userId: string | number,
    orderId: string | number,
    status: OrderStatus,
    expectation?: Expectation,
  ): Promise<Order> {
    const owner = await this.authorize(principal, userId);
    if (!ORDER_STATUSES.includes(status)) {
      throw new AppError('VALIDATION_FAILED', 'Validation failed', [{ field: 'status', message: `must be one of ${ORDER_STATUSES.join(', ')}` }]);
    }
    const order = await this.find(owner.userId, orderId);
    if (owner.caller.role !== 'ADMIN' && status !== 'cancelled') throw new AppError('FORBIDDEN', 'The owner of an order may only cancel it');
    try {
      if (expectation) {
        return await this.prisma.$transaction(async (tx) => {
          await lockExpected(tx, 'orders', order.id, 'Order', expectation);
          return tx.order.update({ where: { id: order.id }, data: { status } });
        });
      }
      return await this.prisma.order.update({ where: { id: order.id }, data: { status } });
    } catch (error) {
      translatePrismaError(error, { missing: 'Order not found' });
    }
  }
}
