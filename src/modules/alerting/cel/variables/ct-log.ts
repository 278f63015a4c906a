/** CT-Log event (spec "CT-Log event fields"): declared once in src/modules/ct-log/events.ts. */
export { ctLogVariables } from "../../../ct-log/events";
