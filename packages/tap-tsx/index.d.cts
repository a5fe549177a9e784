// The plugin's exports as tap's plugin build type-checks them.
export declare const importLoader: string
export declare const preload: boolean
export declare const testFileExtensions: string[]
