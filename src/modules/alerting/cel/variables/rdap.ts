/** RDAP change event: declared once in src/modules/rdap/events.ts. */
export { rdapVariables } from "../../../rdap/events";
