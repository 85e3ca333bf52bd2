import { FileStorageDriver } from './file-driver.js';
import { S3StorageDriver, type S3StorageOptions } from './s3-driver.js';
import type { StorageDriver } from './storage-driver.js';
import { StorageError } from './storage-error.js';

/** A scheme as RFC 3986 spells it, short enough to name in an error. */
const SCHEME = /^([a-z][a-z0-9+.-]{0,31}):\/\//;

/** The scheme of a URI (`file`, `s3`), or null when it has none this registry could name. */
export function schemeOf(uri: string): string | null {
  return typeof uri === 'string' ? (SCHEME.exec(uri)?.[1] ?? null) : null;
}

/** The drivers a process can use, one per scheme. */
export class StorageRegistry {
  private readonly drivers = new Map<string, StorageDriver>();

  constructor(drivers: StorageDriver[]) {
    for (const driver of drivers) {
      if (this.drivers.has(driver.scheme)) throw new Error(`two storage drivers for scheme ${driver.scheme}`);
      this.drivers.set(driver.scheme, driver);
    }
  }

  /** The driver for the URI's scheme; a {@link StorageError} `unsupported_scheme` when there is none. */
  driverFor(uri: string): StorageDriver {
    const scheme = schemeOf(uri);
    if (scheme === null) throw new StorageError('invalid_uri', 'storage URI has no scheme (expected e.g. file:///path)');
    const driver = this.drivers.get(scheme);
    if (!driver) {
      const known = [...this.drivers.keys()].map((s) => `${s}://`).join(', ');
      throw new StorageError('unsupported_scheme', `no storage driver for ${scheme}:// on this host (available: ${known || 'none'})`);
    }
    return driver;
  }

  /** The schemes this registry has drivers for, sorted: what a refusal names as available. */
  schemes(): string[] {
    return [...this.drivers.keys()].sort();
  }

  supports(uri: string): boolean {
    const scheme = schemeOf(uri);
    return scheme !== null && this.drivers.has(scheme);
  }
}

/** The registry of this build with nothing configured: `file://` only. */
export function defaultStorageRegistry(): StorageRegistry {
  return new StorageRegistry([new FileStorageDriver()]);
}

export interface StorageSettings {
  /** Set when this process is configured for an S3-compatible store: `s3://` is then served beside `file://`. */
  s3?: S3StorageOptions;
}

/** The registry a process builds from its configuration: `file://` always, `s3://` when configured. */
export function configuredStorageRegistry(settings: StorageSettings): StorageRegistry {
  return new StorageRegistry([new FileStorageDriver(), ...(settings.s3 ? [new S3StorageDriver(settings.s3)] : [])]);
}

const shared = defaultStorageRegistry();

/** The default registry's driver for a URI. */
export function driverFor(uri: string): StorageDriver {
  return shared.driverFor(uri);
}
