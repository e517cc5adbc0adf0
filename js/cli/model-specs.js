// @ts-check
// The `--model [ROLE=]SPEC` options `runvil run` and `runvil test --update` take alike.

/** The forms a SPEC takes, as usage errors name them. */
export const SPEC_FORMS = '[ROLE=]openai:<model>, [ROLE=]script:<file> or [ROLE=]module:<file>[#export]';

/**
 * Each `--model` as given: `ROLE=SPEC` for one role, a bare SPEC for every role without one of its
 * own (role `*`). A SPEC that starts with its kind is bare even when it holds a `=`.
 * @param {string[]} given
 * @returns {{ role: string, spec: string }[]}
 */
export function roleSpecs(given) {
  return given.map((option) => {
    const named = /^([A-Za-z0-9_.-]+)=(.+)$/.exec(option);
    return named && !/^(openai|script|module):/.test(option)
      ? { role: named[1], spec: named[2] }
      : { role: '*', spec: option };
  });
}

/** The usage error for a role given two models. */
export const twiceMessage = (/** @type {string} */ role) =>
  role === '*' ? 'more than one model for every role' : `more than one --model for the role ${role}`;
