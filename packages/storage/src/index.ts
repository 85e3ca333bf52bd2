export type { StorageDriver } from './storage-driver.js';
export { StorageError, isStorageError, type StorageFailure } from './storage-error.js';
export { FileStorageDriver, type FileStorageOptions } from './file-driver.js';
export { openNoFollow, ensureDirectoryNoFollow, assertSamePath, NoFollowError, isNoFollowError, type NoFollowFailure } from './no-follow.js';
export { filePathOf, fileUriOf, MAX_FILE_URI_LENGTH, type FileUriUse } from './file-uri.js';
export { StorageRegistry, defaultStorageRegistry, driverFor, schemeOf } from './registry.js';
