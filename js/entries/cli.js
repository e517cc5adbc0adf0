#!/usr/bin/env node
// @ts-check
// The `runvil` bin (package.json `bin`): the command line of cli/main.js on the Node entry.
import { createEngine } from './index.js';
import { main } from '../cli/main.js';

process.exitCode = await main(process.argv.slice(2), createEngine);
