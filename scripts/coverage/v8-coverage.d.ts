/** The part of @bcoe/v8-coverage (c8's merger; it ships no types) that scripts/coverage/artifact.ts uses. */
declare module '@bcoe/v8-coverage' {
  export interface RangeCov {
    startOffset: number;
    endOffset: number;
    count: number;
  }
  export interface FunctionCov {
    functionName: string;
    ranges: RangeCov[];
    isBlockCoverage: boolean;
  }
  export interface ScriptCov {
    scriptId: string;
    url: string;
    functions: FunctionCov[];
  }
  export interface ProcessCov {
    result: ScriptCov[];
  }
  /** One process's coverage from several: the counts of the same script summed, range by range. */
  export function mergeProcessCovs(processCovs: readonly ProcessCov[]): ProcessCov;
}
