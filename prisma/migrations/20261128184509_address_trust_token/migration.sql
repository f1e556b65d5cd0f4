-- AlterEnum
ALTER TYPE "AccountTokenPurpose" ADD VALUE 'address_trust';
