/** RDAP change event (spec "RDAP event fields"): declared once in src/modules/rdap/events.ts. */
export { rdapVariables } from "../../../rdap/events";
