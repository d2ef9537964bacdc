/** The number of topics of the synthetic corpus. */
export declare const TOPICS: number;
/** The topic of message `i`. */
export declare function topicOf(i: number): number;
/** The unit vector of message `seed` in `topic`. */
export declare function corpusVector(seed: number, topic: number, dims: number): Float32Array;
/** Query `q` of a corpus of `messages`. */
export declare function queryVector(q: number, messages: number, dims: number): Float32Array;
