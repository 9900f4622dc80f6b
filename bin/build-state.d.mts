export declare const ROOT: string;
export declare function buildIsCurrent(root?: string): boolean;
