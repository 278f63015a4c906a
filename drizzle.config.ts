import { defineConfig } from "drizzle-kit";

// `npm run db:generate` writes SQL migrations into migrations/; wrangler applies
// them (`npm run db:migrate:local`, and `npm start` does it for you).
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/db/schema/index.ts",
  out: "./migrations",
});
