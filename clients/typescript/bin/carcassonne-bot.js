#!/usr/bin/env node
// The bot's command (see src/bot.ts); dist/ is built by `npm run build`,
// which `npm install` runs (prepare).
import { main } from "../dist/src/bot.js";

process.exitCode = await main(process.argv.slice(2));
