import { describe, expect, it } from '@jest/globals';
import { Type } from '@sinclair/typebox';
import * as core from '../src/index.js';

// Read off the module, not imported by name: run against a core without `param`, each test
// fails on its own assertion instead of the whole file failing to load.
const { compileProblemFinder, invalidField, invalidParam, OneOf, ServiceError, validateWebhookUrl } = core;

function thrown(action: () => unknown): core.ServiceError {
  try {
    action();
  } catch (error) {
    if (error instanceof ServiceError) return error;
    throw error;
  }
  throw new Error('nothing was thrown');
}

/**
 * The field a refusal is about travels on the error (`param`), set where the refusal is made;
 * the message keeps naming it (`field: reason`) for the API and the CLI, which show only that.
 */
describe('the field an invalid_param refusal is about', () => {
  it('is carried by a refusal of one field, and the message still names it', () => {
    const error = invalidField('new_password', 'must be 10 to 256 characters');
    expect(error).toMatchObject({
      type: 'invalid_param',
      param: 'new_password',
      message: 'new_password: must be 10 to 256 characters',
    });
  });

  it('is absent from a refusal of the request as a whole', () => {
    expect(invalidParam('The request body is not valid JSON.').param).toBeUndefined();
  });

  it('is not part of the public error body, which stays { type, message }', () => {
    expect(invalidField('url', 'must begin with https://').toBody()).toEqual({
      error: { type: 'invalid_param', message: 'url: must begin with https://' },
    });
  });

  it('is set by the webhook URL check, under the name the caller gives the field', () => {
    expect(thrown(() => validateWebhookUrl('http://hooks.example.com/in'))).toMatchObject({
      param: 'url',
      message: 'url: must begin with https://',
    });
    expect(thrown(() => validateWebhookUrl('https://a b', 'endpoint_url'))).toMatchObject({
      param: 'endpoint_url',
    });
  });

  it('is found by the schema validation: the field, the item of a list, the missing field, or none', () => {
    const findProblem = compileProblemFinder(
      Type.Object(
        {
          name: Type.String({ minLength: 1, errorMessage: 'must not be empty' }),
          events: Type.Array(OneOf(['a', 'b'])),
        },
        { additionalProperties: false, minProperties: 1 },
      ),
    );
    expect(findProblem({ name: 'n', events: ['a'] })).toBeNull();
    expect(findProblem({ name: '', events: [] })).toEqual({
      param: 'name',
      reason: 'must not be empty',
      message: 'name: must not be empty',
    });
    expect(findProblem({ name: 'n', events: ['a', 'c'] })).toMatchObject({
      param: 'events[1]',
      message: 'events[1]: must be one of "a", "b"',
    });
    expect(findProblem({ events: [] })).toMatchObject({ param: 'name', message: 'name: is required' });
    expect(findProblem({ name: 'n', events: [], colour: 'red' })).toMatchObject({
      param: 'colour',
      message: 'colour: is not a recognised field',
    });
    expect(findProblem('not an object')).toMatchObject({ param: null, message: '(root): must be object' });
  });
});
