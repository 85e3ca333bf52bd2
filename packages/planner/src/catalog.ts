/**
 * Hardware the planner knows. Numbers are dense (no structured sparsity) peak tensor throughput per GPU, as the
 * vendors publish them for the SXM/HGX parts; the planner multiplies them by a stated MFU, never uses them raw.
 */
export type GpuArchitecture = 'ampere' | 'ada' | 'hopper' | 'blackwell';

export interface GpuSpec {
  /** Catalog key, lower case, as bookings name the GPU. */
  name: string;
  architecture: GpuArchitecture;
  memoryGb: number;
  denseBf16Tflops: number;
  /** Null where the planner does not train in FP8 (anything older than Hopper). */
  denseFp8Tflops: number | null;
  /** GPUs joined by NVLink/NVSwitch; tensor parallelism never leaves this domain. 1 means PCIe only. */
  nvlinkDomain: number;
}

export const GPU_CATALOG: Record<string, GpuSpec> = {
  a100: { name: 'a100', architecture: 'ampere', memoryGb: 80, denseBf16Tflops: 312, denseFp8Tflops: null, nvlinkDomain: 8 },
  // Ada has FP8 tensor cores, but the FP8 training recipes are only validated on Hopper and newer.
  l40s: { name: 'l40s', architecture: 'ada', memoryGb: 48, denseBf16Tflops: 362, denseFp8Tflops: null, nvlinkDomain: 1 },
  h100: { name: 'h100', architecture: 'hopper', memoryGb: 80, denseBf16Tflops: 989, denseFp8Tflops: 1979, nvlinkDomain: 8 },
  h200: { name: 'h200', architecture: 'hopper', memoryGb: 141, denseBf16Tflops: 989, denseFp8Tflops: 1979, nvlinkDomain: 8 },
  b200: { name: 'b200', architecture: 'blackwell', memoryGb: 180, denseBf16Tflops: 2250, denseFp8Tflops: 4500, nvlinkDomain: 8 },
};

export interface FabricSpec {
  name: string;
  /** Inter-node bandwidth available to each GPU, in Gb/s (one NIC per GPU for RDMA fabrics). */
  perGpuGbps: number;
  /** RDMA (GPUDirect) lets NCCL move data without the host CPU; without it collectives crawl through TCP. */
  rdma: boolean;
  /**
   * Largest model (parameters) the fabric carries in a multi-node plan; null when only the bandwidth check
   * applies. Without RDMA the per-step synchronisation of a large model cannot be hidden behind compute.
   */
  maxMultiNodeParameters: number | null;
}

export const FABRIC_CATALOG: Record<string, FabricSpec> = {
  infiniband: { name: 'infiniband', perGpuGbps: 400, rdma: true, maxMultiNodeParameters: null },
  roce: { name: 'roce', perGpuGbps: 200, rdma: true, maxMultiNodeParameters: null },
  // A 100 GbE port per node shared by eight GPUs, NCCL over TCP sockets.
  ethernet: { name: 'ethernet', perGpuGbps: 12.5, rdma: false, maxMultiNodeParameters: 13e9 },
};

export function findGpu(name: string): GpuSpec | undefined {
  return Object.hasOwn(GPU_CATALOG, name.toLowerCase()) ? GPU_CATALOG[name.toLowerCase()] : undefined;
}

export function findFabric(name: string): FabricSpec | undefined {
  return Object.hasOwn(FABRIC_CATALOG, name.toLowerCase()) ? FABRIC_CATALOG[name.toLowerCase()] : undefined;
}

/** FP8 training is planned only on Hopper or newer. */
export function supportsFp8(gpu: GpuSpec): boolean {
  return gpu.denseFp8Tflops !== null && (gpu.architecture === 'hopper' || gpu.architecture === 'blackwell');
}
