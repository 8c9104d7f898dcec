import { RunStore } from "../src/index.js"
import { conformance } from "./runStoreConformance.js"

conformance("in memory", RunStore.layerMemory())
