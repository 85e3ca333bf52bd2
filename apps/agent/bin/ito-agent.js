#!/usr/bin/env node
// Committed launcher: npm links workspace bins at install time, before `dist/` is built, and skips a bin
// whose file is missing. This file always exists and hands over to the built entry point.
import '../dist/main.js';
